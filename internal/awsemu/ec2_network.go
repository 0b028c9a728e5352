package awsemu

import (
	"sort"
	"strconv"
)

type xmlSubnet struct {
	SubnetID     string   `xml:"subnetId"`
	VpcID        string   `xml:"vpcId"`
	State        string   `xml:"state"`
	CIDR         string   `xml:"cidrBlock"`
	AvailableIPs int      `xml:"availableIpAddressCount"`
	Zone         string   `xml:"availabilityZone"`
	ZoneID       string   `xml:"availabilityZoneId"`
	OwnerID      string   `xml:"ownerId"`
	Tags         []xmlTag `xml:"tagSet>item"`
}

type describeSubnetsResponse struct {
	ResponseMeta
	Subnets   []xmlSubnet `xml:"subnetSet>item"`
	NextToken string      `xml:"nextToken,omitempty"`
}

func (e *Emulator) describeSubnets(p params) (any, *APIError) {
	ids := p.strings("SubnetId")
	e.mu.Lock()
	var matched []xmlSubnet
	for _, s := range e.network.subnets {
		fields := map[string]string{"subnet-id": s.ID, "vpc-id": s.VpcID, "availability-zone": s.Zone,
			"availability-zone-id": e.zoneID(s.Zone), "state": "available", "cidr-block": s.CIDR}
		if (len(ids) > 0 && !matchValue(ids, s.ID)) || !matchAll(p.filters(), fields, s.Tags) {
			continue
		}
		matched = append(matched, xmlSubnet{s.ID, s.VpcID, "available", s.CIDR, s.AvailableIPs, s.Zone,
			e.zoneID(s.Zone), e.cfg.AccountID, tagSet(s.Tags)})
	}
	e.mu.Unlock()
	if err := missing(ids, len(matched), "InvalidSubnetID.NotFound", "subnet"); err != nil {
		return nil, err
	}
	sort.Slice(matched, func(i, j int) bool { return matched[i].SubnetID < matched[j].SubnetID })
	from, to, next, err := page(p, len(matched), 5, 1000, 1000)
	if err != nil {
		return nil, err
	}
	return describeSubnetsResponse{ec2Resp("DescribeSubnets"), matched[from:to], next}, nil
}

// missing reports ids asked for explicitly that were not all found.
func missing(ids []string, found int, code, kind string) *APIError {
	if len(ids) > found {
		return &APIError{code, "The " + kind + " ID(s) " + strconv.Quote(ids[0]) + " ... do not exist"}
	}
	return nil
}

// matchAll applies filters on plain fields and tags; unknown filter names
// match nothing, as EC2 rejects them.
// matchLazy is matchAll building the fields only when a filter needs them:
// tag filters, the common case, are checked first.
func matchLazy(fs []filter, fields func() map[string]string, tags map[string]string) bool {
	var rest []filter
	for _, f := range fs {
		if handled, ok := matchTags(f, tags); handled {
			if !ok {
				return false
			}
			continue
		}
		rest = append(rest, f)
	}
	return len(rest) == 0 || matchAll(rest, fields(), tags)
}

func matchAll(fs []filter, fields, tags map[string]string) bool {
	for _, f := range fs {
		if handled, ok := matchTags(f, tags); handled {
			if !ok {
				return false
			}
			continue
		}
		got, known := fields[f.name]
		if !known || !matchValue(f.values, got) {
			return false
		}
	}
	return true
}

type xmlSecurityGroup struct {
	GroupID     string   `xml:"groupId"`
	GroupName   string   `xml:"groupName"`
	Description string   `xml:"groupDescription"`
	VpcID       string   `xml:"vpcId"`
	OwnerID     string   `xml:"ownerId"`
	Tags        []xmlTag `xml:"tagSet>item"`
}

type describeSGsResponse struct {
	ResponseMeta
	Groups    []xmlSecurityGroup `xml:"securityGroupInfo>item"`
	NextToken string             `xml:"nextToken,omitempty"`
}

func (e *Emulator) describeSecurityGroups(p params) (any, *APIError) {
	ids, names := p.strings("GroupId"), p.strings("GroupName")
	e.mu.Lock()
	var matched []xmlSecurityGroup
	for _, g := range e.network.sgs {
		fields := map[string]string{"group-id": g.ID, "group-name": g.Name, "vpc-id": g.VpcID}
		if (len(ids) > 0 && !matchValue(ids, g.ID)) || (len(names) > 0 && !matchValue(names, g.Name)) ||
			!matchAll(p.filters(), fields, g.Tags) {
			continue
		}
		matched = append(matched, xmlSecurityGroup{g.ID, g.Name, g.Name, g.VpcID, e.cfg.AccountID, tagSet(g.Tags)})
	}
	e.mu.Unlock()
	if err := missing(ids, len(matched), "InvalidGroup.NotFound", "security group"); err != nil {
		return nil, err
	}
	sort.Slice(matched, func(i, j int) bool { return matched[i].GroupID < matched[j].GroupID })
	from, to, next, err := page(p, len(matched), 5, 1000, 1000)
	if err != nil {
		return nil, err
	}
	return describeSGsResponse{ec2Resp("DescribeSecurityGroups"), matched[from:to], next}, nil
}

type xmlImage struct {
	ImageID      string   `xml:"imageId"`
	Name         string   `xml:"name"`
	Architecture string   `xml:"architecture"`
	OwnerID      string   `xml:"imageOwnerId"`
	State        string   `xml:"imageState"`
	CreationDate string   `xml:"creationDate"`
	ImageType    string   `xml:"imageType"`
	Public       bool     `xml:"isPublic"`
	RootDevice   string   `xml:"rootDeviceType"`
	Virtual      string   `xml:"virtualizationType"`
	Deprecation  string   `xml:"deprecationTime,omitempty"`
	Tags         []xmlTag `xml:"tagSet>item"`
}

type describeImagesResponse struct {
	ResponseMeta
	Images    []xmlImage `xml:"imagesSet>item"`
	NextToken string     `xml:"nextToken,omitempty"`
}

func (e *Emulator) describeImages(p params) (any, *APIError) {
	ids, owners := p.strings("ImageId"), p.strings("Owner")
	e.mu.Lock()
	var matched []xmlImage
	for _, img := range e.network.images {
		fields := map[string]string{"image-id": img.ID, "name": img.Name, "architecture": img.Architecture,
			"owner-id": img.OwnerID, "state": "available", "image-type": "machine"}
		if (len(ids) > 0 && !matchValue(ids, img.ID)) || (len(owners) > 0 && !matchValue(owners, img.OwnerID)) ||
			!matchAll(p.filters(), fields, img.Tags) || (img.Deprecated && !p.boolean("IncludeDeprecated") && len(ids) == 0) {
			continue
		}
		x := xmlImage{img.ID, img.Name, img.Architecture, img.OwnerID, "available", isoTime(img.CreationDate),
			"machine", true, "ebs", "hvm", "", tagSet(img.Tags)}
		if img.Deprecated {
			x.Deprecation = isoTime(img.CreationDate)
		}
		matched = append(matched, x)
	}
	e.mu.Unlock()
	if err := missing(ids, len(matched), "InvalidAMIID.NotFound", "image"); err != nil {
		return nil, err
	}
	sort.Slice(matched, func(i, j int) bool { return matched[i].ImageID < matched[j].ImageID })
	from, to, next, err := page(p, len(matched), 5, 1000, 1000)
	if err != nil {
		return nil, err
	}
	return describeImagesResponse{ec2Resp("DescribeImages"), matched[from:to], next}, nil
}

// DeprecateImage marks an image deprecated, so DescribeImages hides it unless asked.
func (e *Emulator) DeprecateImage(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if img, ok := e.network.images[id]; ok {
		img.Deprecated = true
	}
}
